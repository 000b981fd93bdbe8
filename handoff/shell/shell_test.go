package shell

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []Pipeline
	}{
		{"go test ./...", []Pipeline{{{"go", "test", "./..."}}}},
		{`git commit -m "fix: the \"quoted\" part" && git push`, []Pipeline{
			{{"git", "commit", "-m", `fix: the "quoted" part`}}, {{"git", "push"}}}},
		{"go test ./... 2>&1 | tail -20; echo done", []Pipeline{
			{{"go", "test", "./...", "2>&1"}, {"tail", "-20"}}, {{"echo", "done"}}}},
		{"make || make clean & sleep 1", []Pipeline{{{"make"}}, {{"make", "clean"}}, {{"sleep", "1"}}}},
		{"echo 'a | b; c' |& cat", []Pipeline{{{"echo", "a | b; c"}, {"cat"}}}},
		{"cat <<EOF > notes.md\nrm -rf / && echo no\nEOF\nls", []Pipeline{
			{{"cat", "<<EOF", ">", "notes.md"}}, {{"ls"}}}},
		{"cat <<-'END'\n\tx | y\n\tEND\npwd", []Pipeline{{{"cat", "<<-END"}}, {{"pwd"}}}},
		{"echo $(date; uptime) done", []Pipeline{{{"echo", "$(date; uptime)", "done"}}}},
		{"go test \\\n  ./pkg/", []Pipeline{{{"go", "test", "./pkg/"}}}},
		{"", nil},
		{`echo "unterminated`, []Pipeline{{{"echo", "unterminated"}}}},
	} {
		if got := Parse(tc.line); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestProgram(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"FOO=1", "BAR=x", "go", "test"}, []string{"go", "test"}},
		{[]string{"sudo", "-E", "env", "X=1", "make", "install"}, []string{"make", "install"}},
		{[]string{"timeout", "--signal=KILL", "60", "pytest", "-x"}, []string{"pytest", "-x"}},
		{[]string{"npx", "jest", "a/"}, []string{"jest", "a/"}},
		{[]string{"bundle", "exec", "rspec"}, []string{"rspec"}},
		{[]string{"pnpm", "run", "test"}, []string{"pnpm", "run", "test"}},
		{[]string{"python3", "-m", "pytest"}, []string{"pytest"}},
		{[]string{"go", "test", ">", "out.txt", "2>&1"}, []string{"go", "test"}},
		{[]string{"/usr/bin/time", "cargo", "build"}, []string{"cargo", "build"}},
		{[]string{"env"}, nil},
	} {
		if got := Program(tc.in); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Program(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedirectTargets(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"echo", "x", ">", "a.txt"}, []string{"a.txt"}},
		{[]string{"echo", "x", ">>b.log", "2>/dev/null"}, []string{"b.log"}},
		{[]string{"make", "&>build.log", "1>&2"}, []string{"build.log"}},
		{[]string{"go", "test", "2>&1"}, nil},
		{[]string{"cat", ">", "/dev/null"}, nil},
	} {
		if got := RedirectTargets(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RedirectTargets(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIsAssignment(t *testing.T) {
	for w, want := range map[string]bool{
		"FOO=1": true, "_x=": true, "a1_B=c=d": true,
		"=x": false, "1A=x": false, "go": false, "--flag=x": false, "A-B=x": false, "./a=b": false,
	} {
		if got := IsAssignment(w); got != want {
			t.Errorf("IsAssignment(%q) = %v, want %v", w, got, want)
		}
	}
}

// FuzzParse: any line parses without a panic, into pipelines and commands
// that are never empty.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"go test ./...", "a 'b' \"c\" | d && e; f &", "cat <<EOF\nx\nEOF\n", "echo $(a (b) c", "x\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, p := range Parse(line) {
			if len(p) == 0 {
				t.Fatalf("Parse(%q): an empty pipeline", line)
			}
			for _, cmd := range p {
				if len(cmd) == 0 {
					t.Fatalf("Parse(%q): an empty command", line)
				}
				Program(cmd)
				RedirectTargets(cmd)
			}
		}
	})
}
