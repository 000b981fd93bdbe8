package agentconfig

import (
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeAtomic is renameio.WriteFile followed by a sync of the folder:
// renameio syncs the file before the rename, not the rename itself.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	if err := renameio.WriteFile(path, data, perm); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
