//go:build unix

package ledgerbin

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock on the file at path (made if missing),
// waiting for another process's, and returns its release. The kernel
// drops the lock when the process ends, however it ends.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
