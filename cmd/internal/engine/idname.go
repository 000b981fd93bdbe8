package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxIDName bounds an id's file or folder name, well under the 255 bytes
// file systems allow, leaving room for what the name is part of
// (rollout-<time>-<id>.jsonl, <id>.<time>.<nanos>.<pid>.json).
const maxIDName = 128

// IDName is an id (a session's, or any other read from a transcript or a
// hook payload) as one file or folder name. Ids come from files others
// write, so nothing in one may choose where ledger writes: every path part
// made of an id is made here.
//
// A letter, digit, '-' or '_' stays itself; every other byte becomes %XX
// (its value in upper-case hex), so the name holds no separator, no dot
// (never "." or ".."; nothing hidden), no control character and no space.
// A real session id (a UUID) is its own name. The name of an empty id is
// "%-", and one whose encoding is longer than maxIDName keeps its first
// part followed by "%-" and a hash of the whole id: "%-" appears in no
// encoding, so distinct ids always get distinct names. A name Windows
// reserves for a device (CON, NUL, COM1...) has its first letter encoded.
func IDName(id string) string {
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		const hexDigits = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	name := b.String()
	if name == "" {
		return "%-"
	}
	if len(name) > maxIDName {
		sum := sha256.Sum256([]byte(id))
		tag := "%-" + hex.EncodeToString(sum[:16])
		cut := maxIDName - len(tag)
		// Cut between encodings, never inside a %XX.
		for i := cut - 2; i < cut; i++ {
			if i >= 0 && name[i] == '%' {
				cut = i
			}
		}
		name = name[:cut] + tag
	}
	if windowsDevice(name) {
		name = "%" + strings.ToUpper(hex.EncodeToString([]byte{name[0]})) + name[1:]
	}
	return name
}

// windowsDevice reports whether name is one Windows keeps for a device,
// whatever the case: opening it there opens the device, not a file.
func windowsDevice(name string) bool {
	switch strings.ToUpper(name) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(name) == 4 {
		switch strings.ToUpper(name[:3]) {
		case "COM", "LPT":
			return name[3] >= '0' && name[3] <= '9'
		}
	}
	return false
}
