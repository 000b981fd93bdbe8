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

// Projects lists the distinct projects of the stored sessions.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	out := []string{}
	if err := s.db.SelectContext(ctx, &out, `SELECT DISTINCT project FROM sessions WHERE project <> '' ORDER BY project`); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}
