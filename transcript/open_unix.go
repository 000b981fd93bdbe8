//go:build unix

package transcript

import "syscall"

// openNonBlock opens without waiting: for a FIFO, without waiting for a
// writer. A regular file reads as usual.
const openNonBlock = syscall.O_NONBLOCK
