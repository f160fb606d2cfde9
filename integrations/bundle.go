package integrations

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteBundle packs the Claude Desktop bundle into out: a zip (.mcpb) holding the generated
// manifest and the postern binary (empty: this one) at the manifest's server.entry_point,
// which it returns.
func WriteBundle(manifestPath, binary, out string) (string, error) {
	m, err := os.ReadFile(manifestPath)
	if err != nil {
		return "", fmt.Errorf("cannot read the manifest %s (%v); run this in a checkout of postern, or pass --manifest", manifestPath, err)
	}
	var man struct {
		Server struct {
			EntryPoint string `json:"entry_point"`
		} `json:"server"`
	}
	if err := json.Unmarshal(m, &man); err != nil || man.Server.EntryPoint == "" || strings.Contains(man.Server.EntryPoint, "..") {
		return "", fmt.Errorf("the manifest %s has no usable server.entry_point; regenerate it with go generate ./...", manifestPath)
	}
	bin := binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return "", err
		}
	}
	b, err := os.Open(bin)
	if err != nil {
		return "", fmt.Errorf("cannot read the binary %s: %v", bin, err)
	}
	defer b.Close()
	tmp, err := os.CreateTemp(filepath.Dir(out), ".postern-mcpb-*")
	if err != nil {
		return "", fmt.Errorf("cannot write in %s: %v", filepath.Dir(out), err)
	}
	defer os.Remove(tmp.Name())
	zw := zip.NewWriter(tmp)
	w, err := zw.Create("manifest.json")
	if err == nil {
		_, err = w.Write(m)
	}
	if err == nil {
		hdr := &zip.FileHeader{Name: man.Server.EntryPoint, Method: zip.Deflate}
		hdr.SetMode(0o755)
		if w, err = zw.CreateHeader(hdr); err == nil {
			_, err = io.Copy(w, b)
		}
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		tmp.Close()
		return "", fmt.Errorf("cannot write the bundle %s: %v", out, err)
	}
	return man.Server.EntryPoint, nil
}
