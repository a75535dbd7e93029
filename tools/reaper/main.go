// Command reaper is a stand-in for testcontainers' Ryuk, built because no
// registry can be reached here to pull it: `scripts/ryukimage.sh` wraps it
// FROM scratch under the tag testcontainers-go asks for, so the project's
// testcontainers suites can run with Ryuk on.
//
// It speaks the part of Ryuk's protocol testcontainers-go uses: a client
// connects over TCP (RYUK_PORT, default 8080) and sends lines of label
// filters ("label=k=v&label=k2=v2"), each answered with "ACK". Once every
// client has gone and none has come back within RYUK_RECONNECTION_TIMEOUT
// (default 10s), or when no client came within RYUK_CONNECTION_TIMEOUT
// (default 1m), it removes the containers, networks, volumes and images
// that match any filter, through the Docker socket, and exits.
package main

import "github.com/tickerdesk/tickerdesk/pkg/cmdmain"

func main() {
	cmdmain.Run("reaper", run)
}
