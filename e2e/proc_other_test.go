//go:build !linux

package e2e

import "syscall"

func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
