// Package reports writes what a simulation run leaves behind for people and
// for CI: the JSON summary (and the merge of sharded ones), JUnit XML, the
// self-contained HTML report of a failing seed and the suite's index page.
//
// It only reads results: it never runs the simulator, never changes an
// outcome, and every page it writes works offline, from a file, with no
// network access (inline CSS and JS, no external fonts or scripts). Every
// value that comes from the engine or the workload is escaped by html/template.
package reports
