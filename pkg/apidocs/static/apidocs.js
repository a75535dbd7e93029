// apidocs.js starts Swagger UI on the documents the page lists in its
// data-documents attribute. It is a file rather than an inline script so
// that the page's Content-Security-Policy can forbid inline scripts.
"use strict";
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  var documents = JSON.parse(root.getAttribute("data-documents"));
  window.ui = SwaggerUIBundle({
    urls: documents,
    "urls.primaryName": documents[0].name,
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout",
    deepLinking: true,
    // Never send the document to the public validator: the page works
    // offline, and its policy allows no other origin.
    validatorUrl: null,
    // Keys stay in the page's memory only, never in localStorage.
    persistAuthorization: false
  });
});
