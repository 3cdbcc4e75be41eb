// Command nshello prints the IPv4 addresses of the host it runs on, so a
// test can see which lab namespace a built binary ran in.
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			fmt.Println(n.IP)
		}
	}
}
