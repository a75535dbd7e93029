// Package e2e holds the end-to-end tests of notes-svc: the real router and
// handlers over a real PostgreSQL database, every response validated
// against the embedded OpenAPI document.
package e2e
