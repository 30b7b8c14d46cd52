// gowork.go - a Go workload for symbolization without a symbol table: built
// with -ldflags='-s -w', only .gopclntab names main.hotGoWork.
// Prints "ready PID" once running; runs until killed.
package main

import (
	"fmt"
	"os"
)

var sink uint64

//go:noinline
func hotGoWork(seed uint64) uint64 {
	x := seed
	for i := 0; i < 2000000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	fmt.Printf("ready %d\n", os.Getpid())
	acc := uint64(1)
	for {
		acc = hotGoWork(acc)
		sink = acc
	}
}
