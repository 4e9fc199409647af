package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

// DefaultTimelineITLThresholdsMs are vllm bench serve's --timeline-itl-thresholds:
// inter-token gaps below 25 ms are green, below 50 ms orange, the rest red.
var DefaultTimelineITLThresholdsMs = [2]float64{25, 50}

// Timeline colours, as vLLM's timeline plot: TTFT blue, then ITL green, orange, red;
// llmbench adds grey for a failed request's span.
const (
	tlTTFT   = "#636EFA"
	tlFast   = "#109618"
	tlMid    = "#FF7F0E"
	tlSlow   = "#D62728"
	tlFailed = "#9E9E9E"
)

// tlSeg is one coloured span of a request's row, in seconds from the first send.
type tlSeg struct {
	X, W  float64 // pixels
	Color string
	Title string
}

// tlRow is one request.
type tlRow struct {
	Y      float64
	Label  string
	Title  string
	Segs   []tlSeg
	Failed bool
}

// tlPage is what the timeline template draws.
type tlPage struct {
	Title        string
	Width        int
	Height       int
	PlotW        float64
	RowH         float64
	Left         float64
	Rows         []tlRow
	Ticks        []tlTick
	Legend       []tlLegend
	Requests     int
	Failed       int
	DurationText string
}

type tlTick struct {
	X     float64
	Label string
}

type tlLegend struct {
	Color, Label string
}

// VLLMTimelineHTML writes vllm bench serve's --plot-timeline as a self-contained HTML
// page (an SVG, no scripts): one row per request in dataset order, from its send to its
// first token (TTFT, blue), then each inter-token gap coloured by thresholdsMs (below
// the first green, below the second orange, else red); a failed request is a grey
// span from its send to its end. Consecutive gaps of one colour are drawn as one
// span. Every span's tooltip gives its times.
func VLLMTimelineHTML(w io.Writer, res *serving.Result, thresholdsMs [2]float64) error {
	recs := slices.Clone(res.Records)
	slices.SortFunc(recs, func(a, b metrics.Record) int { return a.Index - b.Index })
	if len(recs) == 0 {
		return fmt.Errorf("timeline: no requests")
	}
	t0 := recs[0].Start
	end := time.Duration(0)
	for _, r := range recs {
		t0 = min(t0, r.Start)
		end = max(end, r.Start+r.Latency)
	}
	span := max((end - t0).Seconds(), 1e-6)
	p := tlPage{Title: fmt.Sprintf("Request timeline: %s, %d requests", res.ModelID, len(recs)), Width: 1200, Left: 90, Requests: len(recs),
		DurationText: fmt.Sprintf("%.3f s", span)}
	p.PlotW = float64(p.Width) - p.Left - 20
	p.RowH = min(14, max(2, 900/float64(len(recs))))
	p.Height = int(40 + p.RowH*float64(len(recs)) + 40)
	x := func(d time.Duration) float64 { return p.Left + (d-t0).Seconds()/span*p.PlotW }
	lo, hi := thresholdsMs[0]/1e3, thresholdsMs[1]/1e3
	labels := [3]string{fmt.Sprintf("ITL < %.0f ms", thresholdsMs[0]), fmt.Sprintf("%.0f ms ≤ ITL < %.0f ms", thresholdsMs[0], thresholdsMs[1]),
		fmt.Sprintf("ITL ≥ %.0f ms", thresholdsMs[1])}
	p.Legend = []tlLegend{{tlTTFT, "TTFT"}, {tlFast, labels[0]}, {tlMid, labels[1]}, {tlSlow, labels[2]}, {tlFailed, "failed request"}}
	for i, r := range recs {
		row := tlRow{Y: 40 + p.RowH*float64(i), Label: fmt.Sprintf("Req %d", r.Index), Failed: !r.Success,
			Title: fmt.Sprintf("Req %d: sent %.3f s, prompt %d tokens, output %d tokens", r.Index, (r.Start - t0).Seconds(), r.PromptLen, r.OutputTokens)}
		add := func(from, to time.Duration, color, what string) {
			seg := tlSeg{X: x(from), W: max(x(to)-x(from), 0.5), Color: color,
				Title: fmt.Sprintf("%s: %s %.3f s → %.3f s (%.1f ms)", row.Label, what, (from - t0).Seconds(), (to - t0).Seconds(), (to-from).Seconds()*1e3)}
			if n := len(row.Segs); n > 0 && row.Segs[n-1].Color == color && color != tlTTFT {
				prev := &row.Segs[n-1]
				prev.W = seg.X + seg.W - prev.X
				prev.Title = fmt.Sprintf("%s: %s …→ %.3f s", row.Label, labelOf(color, labels), (to - t0).Seconds())
				return
			}
			row.Segs = append(row.Segs, seg)
		}
		if !r.Success {
			p.Failed++
			add(r.Start, r.Start+max(r.Latency, r.TTFT), tlFailed, "failed ("+r.Error+")")
			p.Rows = append(p.Rows, row)
			continue
		}
		if r.NonStreaming { // one whole answer: no first token, no gaps
			add(r.Start, r.Start+r.Latency, tlFast, "whole answer (non-streaming: E2EL only)")
			p.Rows = append(p.Rows, row)
			continue
		}
		at := r.Start + r.TTFT
		add(r.Start, at, tlTTFT, "TTFT")
		for _, gap := range r.ITL {
			c := tlSlow
			switch g := gap.Seconds(); {
			case g < lo:
				c = tlFast
			case g < hi:
				c = tlMid
			}
			add(at, at+gap, c, labelOf(c, labels))
			at += gap
		}
		p.Rows = append(p.Rows, row)
	}
	for i := range 11 {
		f := float64(i) / 10
		p.Ticks = append(p.Ticks, tlTick{X: p.Left + f*p.PlotW, Label: fmt.Sprintf("%.2f s", f*span)})
	}
	return timelineTemplate.Execute(w, p)
}

// labelOf names a colour of the legend.
func labelOf(color string, itl [3]string) string {
	switch color {
	case tlFast:
		return itl[0]
	case tlMid:
		return itl[1]
	case tlSlow:
		return itl[2]
	case tlTTFT:
		return "TTFT"
	}
	return "failed"
}

var timelineTemplate = template.Must(template.New("timeline").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font:13px sans-serif;margin:16px}svg text{font:10px sans-serif}.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 14px;vertical-align:middle}</style>
</head><body>
<h1 style="font-size:16px">{{.Title}}</h1>
<p>{{.Requests}} requests over {{.DurationText}}{{if .Failed}}, {{.Failed}} failed{{end}}. Each row: send → first token (TTFT) → each inter-token gap. Hover a span for its times.</p>
<p class="legend">{{range .Legend}}<span style="background:{{.Color}}"></span>{{.Label}}{{end}}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}">
{{range .Ticks}}<line x1="{{.X}}" x2="{{.X}}" y1="30" y2="{{$.Height}}" stroke="#ddd"/><text x="{{.X}}" y="24" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Rows}}<g class="req{{if .Failed}} failed{{end}}"><title>{{.Title}}</title>{{if ge $.RowH 8.0}}<text x="4" y="{{.Y}}" dy="{{$.RowH}}">{{.Label}}</text>{{end}}{{$y := .Y}}{{range .Segs}}<rect x="{{.X}}" y="{{$y}}" width="{{.W}}" height="{{$.RowH}}" fill="{{.Color}}"><title>{{.Title}}</title></rect>{{end}}</g>
{{end}}</svg>
</body></html>
`))
