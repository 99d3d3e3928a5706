// Package pages holds one templ page per route of the web UI. Pages take
// the services' wire shapes, or small view models shaped like the screen,
// never database rows.
package pages
