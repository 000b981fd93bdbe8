package store

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// PausedProject is a project the user paused recording for.
type PausedProject struct {
	Project string    `db:"project" json:"project"`
	At      time.Time `db:"at" json:"at"`
}

// PauseProject pauses recording for a project folder (and every folder
// below it). Pausing a paused project keeps its first time; paused is false
// then.
func (s *Store) PauseProject(ctx context.Context, project string, at time.Time) (paused bool, err error) {
	err = Retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, `INSERT INTO paused_projects (project, at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			filepath.Clean(project), at.UTC())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		paused = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("pause %s: %w", project, err)
	}
	return paused, nil
}

// ResumeProject resumes recording for a paused project; resumed is false
// when it was not paused.
func (s *Store) ResumeProject(ctx context.Context, project string) (resumed bool, err error) {
	err = Retry(ctx, func() error {
		// As given, or as stored: a path holding a secret is stored redacted.
		p := filepath.Clean(project)
		res, err := s.db.ExecContext(ctx, `DELETE FROM paused_projects WHERE project = $1 OR project = $2`, p, s.StoredKey(p))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		resumed = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("resume recording %s: %w", project, err)
	}
	return resumed, nil
}

// PausedProjects lists the paused projects, by folder.
func (s *Store) PausedProjects(ctx context.Context) ([]PausedProject, error) {
	out := []PausedProject{}
	if err := s.db.SelectContext(ctx, &out, `SELECT project, at FROM paused_projects ORDER BY project`); err != nil {
		if s.d.noTable(err) {
			// A ledger without the table (read-only and older, or a
			// backend whose schema lacks it) has nothing paused.
			return out, nil
		}
		return nil, fmt.Errorf("list paused projects: %w", err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}

// PausedAndStored lists the paused projects (as PausedProjects) and the
// distinct projects of the stored sessions (as Projects) in one statement:
// what a search leaves out, read in one round trip to a team ledger's
// server.
func (s *Store) PausedAndStored(ctx context.Context) ([]PausedProject, []string, error) {
	var rows []struct {
		Kind    string     `db:"kind"`
		Project string     `db:"project"`
		At      *time.Time `db:"at"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT 'paused' AS kind, project, at FROM paused_projects
		UNION ALL SELECT 'stored', project, NULL FROM (SELECT DISTINCT project FROM sessions WHERE project <> '') AS d
		ORDER BY kind, project`); err != nil {
		if s.d.noTable(err) {
			projects, err := s.Projects(ctx)
			return []PausedProject{}, projects, err
		}
		return nil, nil, fmt.Errorf("list paused and stored projects: %w", err)
	}
	paused, projects := []PausedProject{}, []string{}
	for _, r := range rows {
		if r.Kind == "stored" {
			projects = append(projects, r.Project)
			continue
		}
		p := PausedProject{Project: r.Project}
		if r.At != nil {
			p.At = r.At.UTC()
		}
		paused = append(paused, p)
	}
	return paused, projects, nil
}

// Projects lists the distinct projects of the stored sessions.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	out := []string{}
	if err := s.db.SelectContext(ctx, &out, `SELECT DISTINCT project FROM sessions WHERE project <> '' ORDER BY project`); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// IgnoredProject is a project ingest kept out of the ledger because of a
// .ledgerignore file: its folder and that file, as they were when it last
// did (the file may be gone since).
type IgnoredProject struct {
	Project string    `db:"project" json:"project"`
	File    string    `db:"file" json:"file"`
	At      time.Time `db:"at" json:"at"`
}

// NoteIgnored records, in the ingest's transaction, that a project's
// sessions were kept out because of the .ledgerignore file given. Only
// the two paths are kept (redacted as every stored path), nothing of the
// sessions.
func (w *Writer) NoteIgnored(ctx context.Context, project, file string, at time.Time) error {
	project, file = w.StoredID(filepath.Clean(project)), w.StoredID(file)
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO ignored_projects (project, file, at) VALUES ($1, $2, $3)
		ON CONFLICT (project) DO UPDATE SET file = excluded.file, at = excluded.at`,
		verbatim(project), verbatim(file), at.UTC()); err != nil {
		return fmt.Errorf("note ignored project %s: %w", project, err)
	}
	return nil
}

// IgnoredProjects lists the projects ingest kept out because of a
// .ledgerignore file, by folder.
func (s *Store) IgnoredProjects(ctx context.Context) ([]IgnoredProject, error) {
	out := []IgnoredProject{}
	if err := s.db.SelectContext(ctx, &out, `SELECT project, file, at FROM ignored_projects ORDER BY project`); err != nil {
		if s.d.noTable(err) {
			return out, nil // an older ledger opened read-only
		}
		return nil, fmt.Errorf("list ignored projects: %w", err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}
