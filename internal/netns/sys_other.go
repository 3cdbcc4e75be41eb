//go:build !linux

package netns

import (
	"errors"
	"syscall"
)

// Elsewhere New skips before any of these run; they exist so the package, and
// the tests importing it, still compile.

var errNotLinux = errors.New("netns: network namespaces need Linux")

func inNetns(string, func() error) error    { return errNotLinux }
func procAttr() *syscall.SysProcAttr        { return nil }
func signalGroup(int, syscall.Signal) error { return errNotLinux }
func killPid(int) error                     { return errNotLinux }
func processAlive(int) bool                 { return true }
