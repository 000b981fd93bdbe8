package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// object is a JSON object that keeps its keys in order, so that rewriting
// a user's settings.json changes only what ledger owns.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(b []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func (o *object) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

func (o *object) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(o.vals[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// hookEntry is one command hook in Claude Code's settings.
type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// isLedgerHook tells ledger's own hook commands from everyone else's: the
// program is a "ledger" binary and its first argument is "hook".
func isLedgerHook(raw json.RawMessage) bool {
	var h hookEntry
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	f := strings.Fields(h.Command)
	return len(f) >= 2 && strings.TrimSuffix(filepath.Base(strings.Trim(f[0], `'"`)), ".exe") == "ledger" && f[1] == "hook"
}

// matcherGroup is an element of an event's list: a matcher and its hooks.
// Unknown keys of the user's groups are kept.
type matcherGroup struct {
	obj   *object
	hooks []json.RawMessage
}

// applyHooks removes ledger's hooks from settings and, when add is set,
// adds them back as given (event -> matcher -> entry). Other hooks and keys
// keep their order and content.
func applyHooks(settings []byte, add map[string]hookSpec) ([]byte, error) {
	root, err := parseObject(settings)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	hooks := &object{vals: map[string]json.RawMessage{}}
	if raw, ok := root.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("read settings hooks: %w", err)
		}
	}
	for _, event := range append([]string{}, hooks.keys...) {
		var groups []json.RawMessage
		if err := json.Unmarshal(hooks.vals[event], &groups); err != nil {
			continue // not ours to judge: leave it as it is
		}
		var kept []json.RawMessage
		changed := false
		for _, g := range groups {
			mg, err := parseGroup(g)
			if err != nil {
				kept = append(kept, g)
				continue
			}
			var others []json.RawMessage
			for _, h := range mg.hooks {
				if isLedgerHook(h) {
					changed = true
					continue
				}
				others = append(others, h)
			}
			switch {
			case len(others) == len(mg.hooks):
				kept = append(kept, g)
			case len(others) > 0:
				b, _ := json.Marshal(others)
				mg.obj.set("hooks", b)
				nb, _ := json.Marshal(mg.obj)
				kept = append(kept, nb)
			}
		}
		if !changed {
			continue
		}
		if len(kept) == 0 {
			hooks.del(event)
			continue
		}
		b, _ := json.Marshal(kept)
		hooks.set(event, b)
	}
	for _, event := range hookEvents {
		spec, ok := add[event]
		if !ok {
			continue
		}
		var groups []json.RawMessage
		if raw, ok := hooks.get(event); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, fmt.Errorf("settings hooks.%s is not a list", event)
			}
		}
		g := &object{vals: map[string]json.RawMessage{}}
		m, _ := json.Marshal(spec.Matcher)
		g.set("matcher", m)
		e, _ := json.Marshal([]hookEntry{spec.Entry})
		g.set("hooks", e)
		gb, _ := json.Marshal(g)
		groups = append(groups, gb)
		b, _ := json.Marshal(groups)
		hooks.set(event, b)
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	} else {
		b, _ := json.Marshal(hooks)
		root.set("hooks", b)
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	return pretty.Bytes(), nil
}

func parseGroup(raw json.RawMessage) (*matcherGroup, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	mg := &matcherGroup{obj: obj}
	if h, ok := obj.get("hooks"); ok {
		if err := json.Unmarshal(h, &mg.hooks); err != nil {
			return nil, err
		}
	}
	return mg, nil
}

// sameJSON tells whether two documents hold the same JSON value, whatever
// their spacing.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// writeAtomic replaces path with data: a temporary file in the same folder,
// synced, then renamed over it, so a crash leaves the old file or the new
// one, never half of either. The previous file is kept as path.bak.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil {
		if err := os.WriteFile(path+".bak", old, 0o600); err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
