// Command k8sapplycheck checks what `kubectl apply` left in a real API
// server: every object of a rendered overlay exists there, and every
// HorizontalPodAutoscaler, PodDisruptionBudget, NetworkPolicy and Service of
// its namespaces refers to workloads the server holds. It reads the server,
// not the files, so it sees what admission and defaulting made of them.
// scripts/k8s-apply.sh (make k8s-apply) starts the API server and runs it.
package main

import "github.com/tickerdesk/tickerdesk/pkg/cmdmain"

func main() {
	cmdmain.Run("k8sapplycheck", run)
}
