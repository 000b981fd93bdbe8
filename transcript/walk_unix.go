//go:build unix

package transcript

import (
	"os"
	"syscall"
)

// keyOf is the device and inode of a file.
func keyOf(path string, info os.FileInfo) fileKey {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: st.Ino} // Dev is int32 on darwin
	}
	return fileKey{path: path}
}
