//go:build !unix

package transcript

import (
	"os"
	"path/filepath"
)

// keyOf is the real path of a file, where the system gives no inode.
func keyOf(path string, info os.FileInfo) fileKey {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return fileKey{path: path}
}
