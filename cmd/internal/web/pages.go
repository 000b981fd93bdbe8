package web

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// Page sizes.
const (
	sessionsPerPage = 50
	messagesPerPage = 200
)

// handle runs a page's work and renders its failure (failErr).
func (s *Server) handle(w http.ResponseWriter, r *http.Request, err error) {
	s.failErr(w, r, err)
}

// intParam reads an optional non-negative integer parameter.
func intParam(q url.Values, name string, def int) (int, error) {
	v := strings.TrimSpace(q.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badf("%s %q: want a whole number, 0 or more", name, v)
	}
	return n, nil
}

// maxPage bounds page numbers, so that a page's offset (the number times
// the page size) cannot overflow: no ledger has that many pages.
const maxPage = 1 << 30

// pageParam reads the page parameter: a page number from 0. Whether the
// page exists is the view's to say (a 400 that says how many there are).
func pageParam(q url.Values) (int, error) {
	p, err := intParam(q, "page", 0)
	return min(p, maxPage), err
}

// timeParam reads an optional time parameter as the command line reads
// --since and --until.
func timeParam(q url.Values, name string) (time.Time, error) {
	t, err := engine.ParseTime(q.Get(name), time.Now())
	if err != nil {
		return t, badf("%s %v", name, err)
	}
	return t, nil
}

// pathID reads a numeric id from the path.
func pathID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, badf("%q is not an id: want a whole number", v)
	}
	return id, nil
}

// idStore reads the path's id and the store a page reads it from.
func (s *Server) idStore(r *http.Request) (int64, *store.Store, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, nil, err
	}
	st, err := s.e.Store(r.Context())
	return id, st, err
}

// link builds a path with its query (empty values left out).
func link(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// --- sessions

type sessionsData struct {
	Project, Agent, Since, Until string
	Agents                       []engine.Agent // the agent filter's choices
	Rows                         []sessionRow
	Page                         int
	Prev, Next                   string
}

type sessionRow struct {
	ID, Short, Title, Source, Project string
	LastAt                            time.Time
	Messages, Compactions, Clears     int64
	Peak                              int64 // 0: not known
	Handoff                           *store.Handoff
	Cost                              string // as the agent reports it, "-" for none
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := sessionsData{Project: q.Get("project"), Agent: q.Get("agent"), Since: q.Get("since"), Until: q.Get("until"), Agents: engine.Agents()}
	err := func() error {
		f := store.SessionFilter{Project: d.Project, Limit: sessionsPerPage}
		if _, ok := engine.AgentBySource(d.Agent); d.Agent != "" && !ok {
			return badf("agent %q: want one of %s", d.Agent, engine.AgentSources())
		}
		f.Source = d.Agent
		var err error
		if f.Since, err = timeParam(q, "since"); err != nil {
			return err
		}
		if f.Until, err = timeParam(q, "until"); err != nil {
			return err
		}
		if d.Page, err = pageParam(q); err != nil {
			return err
		}
		f.Offset = d.Page * sessionsPerPage
		list, err := s.e.ListSessions(r.Context(), f)
		if err != nil {
			return err
		}
		if d.Page > 0 && len(list.Sessions) == 0 {
			return badf("page %s: past the last page of sessions (pages count from 0)", q.Get("page"))
		}
		for _, x := range list.Sessions {
			row := sessionRow{ID: x.ID, Short: engine.ShortID(x.ID), Title: x.Title, Source: x.Source, Project: x.Project,
				LastAt: x.LastAt, Messages: x.Messages, Compactions: x.Compactions, Clears: x.Clears, Peak: list.Peaks[x.ID],
				Cost: engine.CostText(x.Cost)}
			if h, ok := list.Handoffs[x.ID]; ok {
				row.Handoff = &h
			}
			d.Rows = append(d.Rows, row)
		}
		pageLink := func(p int) string {
			return link("/sessions", "project", d.Project, "agent", d.Agent, "since", d.Since, "until", d.Until, "page", strconv.Itoa(p))
		}
		if d.Page > 0 {
			d.Prev = pageLink(d.Page - 1)
		}
		if list.More {
			d.Next = pageLink(d.Page + 1)
		}
		return nil
	}()
	if err != nil {
		s.handle(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "sessions", page{Title: "Sessions", Nav: "sessions", Data: d})
}

// --- session

type sessionData struct {
	S           store.Session
	Plot        template.HTML
	Window      int64
	WindowFrom  string
	Model       string
	Peak        int64
	Compactions []engine.Mark
	Handoff     *handoff.Doc
	Messages    []messageView
	Page, Pages int
	First, Last int64 // the page's seq range
	Prev, Next  string
	PageLinks   []pageLink
}

type pageLink struct {
	N       int
	URL     string
	Current bool
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	arg := r.PathValue("id")
	var d sessionData
	err := func() error {
		p, err := pageParam(r.URL.Query())
		if err != nil {
			return err
		}
		tl, err := s.e.Timeline(r.Context(), arg)
		if err != nil {
			return err
		}
		if tl.Session.ID != arg {
			// a prefix: the page's stable address is the full id
			http.Redirect(w, r, link("/sessions/"+url.PathEscape(tl.Session.ID), "page", r.URL.Query().Get("page")), http.StatusFound)
			return errRedirected
		}
		d.S, d.Window, d.WindowFrom, d.Peak, d.Compactions = tl.Session, tl.Window, tl.WindowSource, tl.Peak, tl.Compactions
		d.Model = tl.Model
		d.Plot = contextPlot(tl)
		d.Pages = int(max(tl.LastSeq, 0))/messagesPerPage + 1
		if p >= d.Pages {
			return badf("page %s: the session has %d page(s) of %d messages (pages count from 0)", r.URL.Query().Get("page"), d.Pages, messagesPerPage)
		}
		d.Page = p
		st, err := s.e.Store(r.Context())
		if err != nil {
			return err
		}
		from := int64(p * messagesPerPage)
		msgs, seqs, err := st.MessageRange(r.Context(), tl.Session.ID, from, from+messagesPerPage)
		if err != nil {
			return err
		}
		d.Messages = messageViews(msgs, seqs)
		d.First, d.Last = from, from+int64(len(msgs))-1
		base := "/sessions/" + url.PathEscape(tl.Session.ID)
		for i := range d.Pages {
			if i < 2 || i >= d.Pages-2 || i >= p-2 && i <= p+2 {
				d.PageLinks = append(d.PageLinks, pageLink{N: i, URL: link(base, "page", strconv.Itoa(i)), Current: i == p})
			} else if n := len(d.PageLinks); n > 0 && d.PageLinks[n-1].N >= 0 {
				d.PageLinks = append(d.PageLinks, pageLink{N: -1})
			}
		}
		if p > 0 {
			d.Prev = link(base, "page", strconv.Itoa(p-1))
		}
		if p+1 < d.Pages {
			d.Next = link(base, "page", strconv.Itoa(p+1))
		}
		h, err := st.LatestHandoff(r.Context(), tl.Session.ID)
		if err == nil {
			doc, err := h.Doc()
			if err != nil {
				return err
			}
			d.Handoff = &doc
		} else if !errors.Is(err, engine.ErrNotFound) {
			return err
		}
		return nil
	}()
	if errors.Is(err, errRedirected) {
		return
	}
	if err != nil {
		s.handle(w, r, err)
		return
	}
	title := d.S.Title
	if title == "" {
		title = engine.ShortID(d.S.ID)
	}
	s.render(w, r, http.StatusOK, "session", page{Title: "Session " + title, Nav: "sessions", Data: d})
}

var errRedirected = errors.New("redirected")

// --- compaction

type compactionData struct {
	L       engine.Loss
	Rows    []lossRow
	Items   []lossItemRow
	Used    []engine.LossUsedItem // what the agent used next, what the summary lacked first
	Summary string
	Handoff string
}

// lossRow is one section's counts: the summary's (when there is one)
// beside the handoff's.
type lossRow struct {
	Name                     string
	SumKept, HKept, Total    int
	HasSummary               bool
	SumDropped, HandoffDrops int
}

type lossItemRow struct {
	Section     string
	Text        string
	SummaryKept bool
	HandoffKept bool
}

func (s *Server) compaction(w http.ResponseWriter, r *http.Request) {
	var d compactionData
	err := func() error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if d.L, err = s.e.LossReport(r.Context(), id); err != nil {
			return err
		}
		d.Handoff = d.L.Handoff.Text
		for i, h := range d.L.Handoff.Sections {
			row := lossRow{Name: h.Name, HKept: h.Kept, Total: h.Kept + h.Dropped, HandoffDrops: h.Dropped}
			if d.L.Summary != nil {
				sec := d.L.Summary.Sections[i]
				row.HasSummary, row.SumKept, row.SumDropped = true, sec.Kept, sec.Dropped
			}
			d.Rows = append(d.Rows, row)
			for j, it := range h.Items {
				item := lossItemRow{Section: h.Name, Text: it.Text, HandoffKept: it.Kept}
				if d.L.Summary != nil {
					item.SummaryKept = d.L.Summary.Sections[i].Items[j].Kept
				}
				d.Items = append(d.Items, item)
			}
		}
		if d.L.Summary != nil {
			d.Summary = d.L.Summary.Text
		}
		// What the summary dropped first: it is what the page is for.
		slices.SortStableFunc(d.Items, func(a, b lossItemRow) int {
			return cmp.Compare(lost(a), lost(b))
		})
		if u := d.L.UsedAfter; u != nil {
			d.Used = slices.Clone(u.Items)
			slices.SortStableFunc(d.Used, func(a, b engine.LossUsedItem) int {
				return cmp.Compare(lost(lossItemRow{SummaryKept: a.Summary || d.L.Summary == nil, HandoffKept: a.Handoff}),
					lost(lossItemRow{SummaryKept: b.Summary || d.L.Summary == nil, HandoffKept: b.Handoff}))
			})
		}
		return nil
	}()
	if err != nil {
		s.handle(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "compaction", page{Title: fmt.Sprintf("Compaction %d", d.L.Compaction), Nav: "audit", Data: d})
}

// lost orders a loss report's items: 0 for one the summary dropped, 1
// for the handoff dropped it, 2 for one both kept.
func lost(it lossItemRow) int {
	switch {
	case !it.SummaryKept:
		return 0
	case !it.HandoffKept:
		return 1
	}
	return 2
}

// --- handoff

func (s *Server) handoff(w http.ResponseWriter, r *http.Request) {
	var doc handoff.Doc
	err := func() error {
		id, st, err := s.idStore(r)
		if err != nil {
			return err
		}
		h, err := st.Handoff(r.Context(), id)
		if err != nil {
			return err
		}
		doc, err = h.Doc()
		return err
	}()
	if err != nil {
		s.handle(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "handoff", page{Title: fmt.Sprintf("Handoff %d", doc.ID), Nav: "sessions", Data: doc})
}

// --- message: a search hit's stable address, redirected to its place

func (s *Server) message(w http.ResponseWriter, r *http.Request) {
	err := func() error {
		id, st, err := s.idStore(r)
		if err != nil {
			return err
		}
		p, err := st.MessagePlace(r.Context(), id)
		if err != nil {
			return err
		}
		http.Redirect(w, r, messageURL(p.SessionID, p.Seq), http.StatusFound)
		return nil
	}()
	if err != nil {
		s.handle(w, r, err)
	}
}

// messageURL is where a message is shown: its page of its session, at its
// anchor.
func messageURL(session string, seq int64) string {
	return link("/sessions/"+url.PathEscape(session), "page", strconv.FormatInt(seq/messagesPerPage, 10)) + fmt.Sprintf("#m%d", seq)
}

// --- search

type searchData struct {
	Q, Session, Project, Since, Until, Kind, Role, Limit string
	Searched                                             bool
	Any                                                  bool
	Hits                                                 []hitView
}

type hitView struct {
	URL, Session, Kind, Role string
	At                       time.Time
	Snippet                  template.HTML
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := searchData{Q: q.Get("q"), Session: q.Get("session"), Project: q.Get("project"), Since: q.Get("since"),
		Until: q.Get("until"), Kind: q.Get("kind"), Role: q.Get("role"), Limit: q.Get("limit")}
	err := func() error {
		limit, err := intParam(q, "limit", 20)
		if err != nil {
			return err
		}
		if err := engine.CheckSearch(d.Kind, d.Role, limit); err != nil {
			return badRequest{err.Error()}
		}
		if err := engine.CheckQuery(d.Q); err != nil {
			return badRequest{err.Error()}
		}
		req := engine.SearchRequest{Text: d.Q, Session: d.Session}
		req.Kind, req.Role, req.Limit, req.Project = d.Kind, d.Role, limit, d.Project
		if req.Since, err = timeParam(q, "since"); err != nil {
			return err
		}
		if req.Until, err = timeParam(q, "until"); err != nil {
			return err
		}
		if strings.TrimSpace(d.Q) == "" {
			return nil
		}
		d.Searched = true
		res, err := s.e.Search(r.Context(), req)
		if err != nil {
			return err
		}
		d.Any = res.Any
		for _, h := range res.Hits {
			d.Hits = append(d.Hits, hitView{URL: hitURL(h), Session: h.SessionID, Kind: h.Kind, Role: h.Role, At: h.At,
				Snippet: highlight(h.Snippet)})
		}
		return nil
	}()
	if err != nil {
		s.handle(w, r, err)
		return
	}
	title := "Search"
	if d.Q != "" {
		title = "Search: " + d.Q
	}
	s.render(w, r, http.StatusOK, "search", page{Title: title, Nav: "search", Data: d})
}

// hitURL is where a hit is shown.
func hitURL(h store.Hit) string {
	switch h.Kind {
	case store.KindMessage:
		return fmt.Sprintf("/messages/%d", h.ID)
	case store.KindHandoff:
		return fmt.Sprintf("/handoffs/%d", h.ID)
	case store.KindCompaction:
		return fmt.Sprintf("/compactions/%d", h.ID)
	default:
		return "/sessions/" + url.PathEscape(h.SessionID)
	}
}

// highlight escapes a snippet and marks its matched words.
func highlight(snip string) template.HTML {
	var sb strings.Builder
	for i, part := range strings.Split(snip, store.MarkStart) {
		if i == 0 {
			sb.WriteString(template.HTMLEscapeString(part))
			continue
		}
		hit, rest, _ := strings.Cut(part, store.MarkEnd)
		sb.WriteString("<mark>" + template.HTMLEscapeString(hit) + "</mark>" + template.HTMLEscapeString(rest))
	}
	return template.HTML(sb.String())
}

// --- audit

type auditData struct {
	Session, Since string
	Count          int
	Rows           []engine.AuditRow // this page's, newest first
	Chart          template.HTML
	MedianPre      string
	MedianCalls    string
	Prev, Next     string
}

// auditPerPage is how many compactions the audit table lists at once.
const auditPerPage = 100

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := auditData{Session: q.Get("session"), Since: q.Get("since")}
	err := func() error {
		since, err := timeParam(q, "since")
		if err != nil {
			return err
		}
		p, err := pageParam(q)
		if err != nil {
			return err
		}
		all, err := s.e.AuditPage(r.Context(), d.Session, since, p, auditPerPage)
		if err != nil {
			return err
		}
		d.Count = len(all)
		if pages := (len(all) + auditPerPage - 1) / auditPerPage; p > 0 && p >= pages {
			return badf("page %s: %d compactions make %d page(s) (pages count from 0)", q.Get("page"), len(all), pages)
		}
		for i := len(all) - 1 - p*auditPerPage; i >= 0 && i >= len(all)-(p+1)*auditPerPage; i-- {
			d.Rows = append(d.Rows, all[i])
		}
		pageLink := func(n int) string {
			return link("/audit", "session", d.Session, "since", d.Since, "page", strconv.Itoa(n))
		}
		if p > 0 {
			d.Prev = pageLink(p - 1)
		}
		if (p+1)*auditPerPage < len(all) {
			d.Next = pageLink(p + 1)
		}
		var pre, calls []int64
		for _, row := range all {
			if row.PreTokens != nil {
				pre = append(pre, *row.PreTokens)
			}
			calls = append(calls, row.ToolCalls)
		}
		d.MedianPre, d.MedianCalls = median(pre), median(calls)
		d.Chart = auditChart(all)
		return nil
	}()
	if err != nil {
		s.handle(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "audit", page{Title: "Audit", Nav: "audit", Data: d})
}

func median(xs []int64) string {
	m, ok := engine.Median(xs)
	if !ok {
		return "-"
	}
	return humanize.Comma(m)
}
