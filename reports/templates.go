package reports

import (
	"embed"
	"fmt"
	"html/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// pages holds every page template; the shared style and script live in
// templates/common.html.tmpl.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"px":      func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"secs":    func(f float64) string { return fmt.Sprintf("%.2fs", f) },
	"add":     func(a, b int) int { return a + b },
	"fadd":    func(a, b float64) float64 { return a + b },
	"fsub":    func(a, b float64) float64 { return a - b },
	"dur":     fmtDur,
	"verdict": verdictLabel,
	"wbr":     breakable,
	"pct":     func(f float64) float64 { return 100 * f },
	"index0": func(runs []MutantKill) *MutantKill {
		if len(runs) == 0 {
			return nil
		}
		return &runs[0]
	},
}).ParseFS(templateFS, "templates/*.tmpl"))

// verdictLabel is a verdict in words for banners.
func verdictLabel(v string) string {
	switch v {
	case VerdictPass:
		return "pass"
	case VerdictSafety:
		return "safety violation"
	case VerdictLiveness:
		return "liveness violation"
	case VerdictInconclusive:
		return "inconclusive"
	case VerdictExpected:
		return "expected violation found"
	case VerdictEnvironment:
		return "environment broke its contract"
	case VerdictHarness:
		return "harness fault (not the system's)"
	}
	return v
}
