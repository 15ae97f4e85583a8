package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// The console's files are embedded so that the binary serves them with no
// network and no files beside it.
//
//go:embed assets
var assetFS embed.FS

// serveIndex serves the page; the script reads the path to tell the
// overview from a job's page.
func serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := assetFS.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "console missing from this build", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	// The page loads only its own files and talks only to its own server.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

func assetHandler() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Assets change with the binary; revalidating is cheap on loopback.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
