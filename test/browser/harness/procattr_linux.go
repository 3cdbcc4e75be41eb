package harness

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the agent if the test process dies
// first (a timeout panic, a kill), so no agent outlives its test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
