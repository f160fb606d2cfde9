package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// cmdBundle packs the Claude Desktop bundle: a zip (.mcpb) holding the
// generated manifest and this postern binary under server/.
func cmdBundle(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bundle", stderr, "Usage: postern bundle mcpb [--manifest FILE] [--binary FILE] [--out FILE]\n\nPack a Claude Desktop bundle (.mcpb) from the generated manifest and a postern binary.\n\nFlags:\n")
	manifest := fs.String("manifest", filepath.Join("plugins", "postern", "mcpb", "manifest.json"), "the generated manifest")
	binary := fs.String("binary", "", "the postern binary to pack (default: this one)")
	out := fs.String("out", "postern.mcpb", "the bundle to write")
	pos, err := splitFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "mcpb" {
		fs.Usage()
		return exitError{2}
	}
	m, err := os.ReadFile(*manifest)
	if err != nil {
		return fmt.Errorf("cannot read the manifest %s (%v); run this in a checkout of postern, or pass --manifest", *manifest, err)
	}
	var man struct {
		Server struct {
			EntryPoint string `json:"entry_point"`
		} `json:"server"`
	}
	if err := json.Unmarshal(m, &man); err != nil || man.Server.EntryPoint == "" || strings.Contains(man.Server.EntryPoint, "..") {
		return fmt.Errorf("the manifest %s has no usable server.entry_point; regenerate it with go generate ./...", *manifest)
	}
	bin := *binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	b, err := os.Open(bin)
	if err != nil {
		return fmt.Errorf("cannot read the binary %s: %v", bin, err)
	}
	defer b.Close()
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".postern-mcpb-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %v", filepath.Dir(*out), err)
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
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write the bundle %s: %v", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %s (manifest and %s)\n", *out, man.Server.EntryPoint)
	return nil
}
