// Package layout is the frame every page shares: head, assets, navigation
// and the CSRF header htmx sends with every request.
package layout
