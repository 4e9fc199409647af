package report

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// chromium returns a headless-capable Chromium or Chrome, "" when none is installed.
func chromium() string {
	if p := os.Getenv("LLMBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// layoutProbe is appended to the page under test only (the report has no script): it
// measures each chart as laid out and counts text that spills out of its chart or
// overlaps other text, into a <pre id="layout"> that --dump-dom prints.
const layoutProbe = `<script>
(function(){
  const out = [];
  for (const s of document.querySelectorAll('svg.chart')) {
    const r = s.getBoundingClientRect();
    const boxes = [...s.querySelectorAll('text')].map(t => t.getBoundingClientRect()).filter(b => b.width > 0);
    let spill = 0, overlap = 0;
    for (const b of boxes) {
      if (b.x < r.x - 0.5 || b.y < r.y - 0.5 || b.x + b.width > r.x + r.width + 0.5 || b.y + b.height > r.y + r.height + 0.5) spill++;
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x + 1 < b.x + b.width && b.x + 1 < a.x + a.width && a.y + 2 < b.y + b.height && b.y + 2 < a.y + a.height) overlap++;
    }
    out.push([s.dataset.chart, Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height), spill, overlap].join(' '));
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
</script>`

// chartBox is one chart as Chromium laid it out, in CSS pixels.
type chartBox struct {
	name                       string
	left, top, width, height   int
	spilledText, overlapedText int
}

// chromiumLayout renders page in headless Chromium at 1280 px wide and returns its
// charts' layout.
func chromiumLayout(t *testing.T, bin, page string) []chartBox {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	page = strings.Replace(page, "</body>", layoutProbe+"\n</body>", 1)
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1280,2000", "--dump-dom", "file://"+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	m := regexp.MustCompile(`(?s)<pre id="layout">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no layout in the dumped DOM:\n%.2000s", out)
	}
	var boxes []chartBox
	for _, line := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		f := strings.Fields(line)
		if len(f) != 7 {
			t.Fatalf("layout line %q", line)
		}
		n := make([]int, 6)
		for i := range n {
			n[i], _ = strconv.Atoi(f[i+1])
		}
		boxes = append(boxes, chartBox{f[0], n[0], n[1], n[2], n[3], n[4], n[5]})
	}
	return boxes
}

// TestHTMLChromiumLayout renders reports in headless Chromium: every chart is laid out
// at a readable size, two side by side on a 1280-px window, with no text spilling out
// of its chart or overlapping other text.
func TestHTMLChromiumLayout(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium not installed (apt-get install chromium); the HTML layout is not checked")
	}
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	power := benchDoc()
	for i := range power.Bench.Records {
		r := &power.Bench.Records[i]
		r.PowerLimitW = []float64{400, 300}[i/2]
		r.Telemetry = &telemetry.Power{Source: "gpu", Samples: 10, Seconds: 1, MeanW: r.PowerLimitW - 5, EnergyJ: 100 + float64(i)}
	}
	for _, d := range []result.Document{servingDoc(), power, tailDoc()} {
		page := renderHTML(t, d)
		want := len(htmlCharts(t, page))
		boxes := chromiumLayout(t, bin, page)
		if len(boxes) != want || want == 0 {
			t.Fatalf("%d charts laid out, want %d", len(boxes), want)
		}
		sideBySide := false
		for i, b := range boxes {
			if b.width < 450 || b.height < 150 {
				t.Errorf("%s laid out at %d×%d px", b.name, b.width, b.height)
			}
			if b.spilledText > 0 || b.overlapedText > 0 {
				t.Errorf("%s: %d labels spill out of the chart, %d overlap", b.name, b.spilledText, b.overlapedText)
			}
			if i > 0 && boxes[i-1].top == b.top && boxes[i-1].left < b.left {
				sideBySide = true
			}
		}
		if !sideBySide {
			t.Errorf("no two charts side by side at 1280 px: %+v", boxes)
		}
	}
}

// tailDoc is a serving run whose latencies have a long tail (the histograms cut their
// axis and say how many samples lie beyond it).
func tailDoc() result.Document {
	ms := time.Millisecond
	var recs []metrics.Record
	for i := range 200 {
		itl := []time.Duration{time.Duration(i%7+1) * ms / 2, ms}
		ttft := time.Duration(8+i%5) * ms
		if i%50 == 0 {
			ttft, itl[0] = 900*ms, 700*ms
		}
		recs = append(recs, metrics.Record{PromptLen: 64, Start: time.Duration(i) * 10 * ms, TTFT: ttft, ITL: itl,
			Latency: ttft + itl[0] + itl[1], OutputTokens: 3, Success: true})
	}
	res := &serving.Result{Spec: workloads.ServeSpec{Backend: "inproc", RequestRate: workloads.Rate(math.Inf(1)), MaxConcurrency: 4},
		ModelID: "m", Duration: 3 * time.Second, Records: recs}
	res.Summary = serving.Summarize(res)
	return result.Document{Title: "tail", Serving: []*serving.Result{res}}
}
