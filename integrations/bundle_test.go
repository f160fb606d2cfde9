package integrations

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteBundle(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifest, []byte(`{"server":{"entry_point":"server/postern"}}`), 0o644)
	bin := filepath.Join(dir, "postern")
	os.WriteFile(bin, []byte("#!binary"), 0o755)
	out := filepath.Join(dir, "postern.mcpb")
	entry, err := WriteBundle(manifest, bin, out)
	if err != nil || entry != "server/postern" {
		t.Fatalf("WriteBundle = %q, %v", entry, err)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	got := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = string(b)
		if f.Name == "server/postern" && f.Mode()&0o111 == 0 {
			t.Errorf("the binary is not executable in the bundle: %v", f.Mode())
		}
	}
	if len(got) != 2 || got["server/postern"] != "#!binary" || !strings.Contains(got["manifest.json"], "entry_point") {
		t.Fatalf("bundle holds %v", got)
	}
	// A manifest whose entry point climbs out of the bundle is refused, and nothing is written.
	os.WriteFile(manifest, []byte(`{"server":{"entry_point":"../postern"}}`), 0o644)
	out2 := filepath.Join(dir, "bad.mcpb")
	if _, err := WriteBundle(manifest, bin, out2); err == nil || !strings.Contains(err.Error(), "no usable server.entry_point") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("a bundle was written for a refused manifest")
	}
}
