// Package marketdataapi is the wire layer of marketdataclient, generated
// by oapi-codegen (gen.go, from oapi-codegen.yaml) from the /v1 OpenAPI
// document marketdata-svc serves. Do not edit gen.go: change the document
// and run make clients. Use the marketdataclient package; this one is
// exported for the endpoints marketdataclient does not wrap (Client.API).
package marketdataapi
