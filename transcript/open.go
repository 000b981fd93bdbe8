package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is returned by Open for a path that is not a regular file:
// a FIFO, a device, a socket. Reading one can block forever (a FIFO with
// no writer) or never end (/dev/zero).
var ErrNotRegular = errors.New("not a regular file")

// Open opens a transcript file for reading, refusing anything that is not
// a regular file. It never blocks: the file is opened non-blocking (a FIFO
// would otherwise block the open itself until a writer came) and checked
// once open, so that a file swapped for a FIFO between a check and the open
// is refused too.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w (%s): skipped", ErrNotRegular, fileKind(fi.Mode()))
	}
	return f, nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
