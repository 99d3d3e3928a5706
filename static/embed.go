// Package static holds the web UI's stylesheet and scripts, embedded in the
// binary. Every file is served under a URL carrying a hash of its content,
// so browsers may cache it forever and a new build is fetched at once.
// htmx is vendored from the npm package pinned in package.json
// (npm run vendor copies it here).
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

//go:embed css js img
var files embed.FS

// Prefix is where the assets are served.
const Prefix = "/static/"

var (
	hashesOnce sync.Once
	hashes     map[string]string // file name → short content hash
)

// hashOf computes every file's hash once; the files never change at run time.
func hashOf(name string) string {
	hashesOnce.Do(func() {
		hashes = map[string]string{}
		fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			body, _ := files.ReadFile(path)
			sum := sha256.Sum256(body)
			hashes[path] = hex.EncodeToString(sum[:6])
			return nil
		})
	})
	return hashes[name]
}

// Path returns the cache-forever URL of an asset, e.g. Path("css/parley.css").
func Path(name string) string { return Prefix + hashOf(name) + "/" + name }

// Open returns an asset's content when hash is its current hash.
func Open(hash, name string) ([]byte, bool) {
	if h := hashOf(name); h == "" || h != hash {
		return nil, false
	}
	body, err := files.ReadFile(name)
	return body, err == nil
}
