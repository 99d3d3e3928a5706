// Package views holds the web UI's templ components: layout (the page
// frame), pages (one per route) and components (htmx swap targets and parts
// used twice). The generated *_templ.go files are committed; regenerate
// them with `go tool templ generate` after editing a .templ file.
package views
