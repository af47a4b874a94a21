// pause: the sandbox (infra) container of every pod on the local real node. It holds the pod's namespaces,
// reaps orphaned children, and exits on SIGINT or SIGTERM. This project's own, because no registry (and so
// no registry.k8s.io/pause image) is reachable: tools/node/build-node-tools.sh builds it, image/build.py packs it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			os.Exit(0)
		case <-children:
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
