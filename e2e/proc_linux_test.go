package e2e

import "syscall"

// dieWithParent makes the kernel kill the child if the test process dies
// first (a panic, a -timeout), so that no child outlives its test.
func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Pdeathsig = syscall.SIGKILL
	return a
}
