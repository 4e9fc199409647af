package report

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"llmbench/workloads/kernelbench"
)

// KernelsText writes a kernel benchmark's report as `llmbench kernels` prints it:
// every section, the notes and the checks.
func KernelsText(w io.Writer, r *kernelbench.Report) error {
	_, err := io.WriteString(w, r.Text())
	return err
}

// kernelsMarkdown writes the report's sections under "##" headings, each one's
// printed text in a fenced block, then the notes and checks.
func kernelsMarkdown(b *bytes.Buffer, r *kernelbench.Report) {
	for _, s := range r.Sections {
		b.WriteString("## " + mdCell(s.Title) + "\n\n```text\n" + s.Text + "```\n\n")
	}
	if t := r.Trailer(); t != "" {
		b.WriteString("## Notes\n\n```text\n" + t + "```\n\n")
	}
}

// kernelsCSV writes every section's table as CSV rows: suite, section, then the
// table's columns (a header row again whenever the columns change), then run_partial.
func kernelsCSV(w io.Writer, r *kernelbench.Report, partial bool) error {
	var b bytes.Buffer
	var cols []string
	for _, s := range r.Sections {
		if s.Table == nil {
			continue
		}
		if !slices.Equal(cols, s.Table.Columns) {
			cols = s.Table.Columns
			names := append([]string{"suite", "section"}, cols...)
			b.WriteString(strings.Join(append(names, "run_partial"), ",") + "\n")
		}
		for _, row := range s.Table.Rows {
			cells := []string{csvQuote(r.Spec.Suite), csvQuote(s.Title)}
			for _, c := range row {
				cells = append(cells, csvQuote(c))
			}
			b.WriteString(strings.Join(append(cells, csvQuote(lbText(partial))), ",") + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// kernelsJSON sets the kernel benchmark's fields of the JSON export: the spec, the
// sections (title, printed text, table), the checks, notes and the suite's typed
// results.
func kernelsJSON(o *vllmObject, r *kernelbench.Report) {
	o.set("kind", "kernels")
	o.set("suite", r.Spec.Suite)
	o.set("spec", r.Spec)
	o.set("sections", r.Sections)
	o.set("checks", r.Checks)
	o.set("notes", r.Notes)
	if len(r.Data) > 0 && json.Valid(r.Data) {
		o.set("results", r.Data)
	}
}

// kernelsHTML writes each section as a heading, its table and its printed text
// (which holds the block-mask picture), then the notes and checks.
func kernelsHTML(p *htmlPage, r *kernelbench.Report) {
	for _, s := range r.Sections {
		p.heading(s.Title)
		if t := s.Table; t != nil {
			cells := func(row []string, head bool) []htmlCell {
				out := make([]htmlCell, len(row))
				for i, c := range row {
					out[i] = htmlCell{Text: c, Head: head, Right: i < len(t.Numeric) && t.Numeric[i]}
				}
				return out
			}
			rows := [][]htmlCell{cells(t.Columns, true)}
			for _, row := range t.Rows {
				rows = append(rows, cells(row, false))
			}
			p.table("", rows)
		}
		p.pre(s.Text)
	}
	if t := r.Trailer(); t != "" {
		p.heading("Notes")
		p.pre(t)
	}
}
