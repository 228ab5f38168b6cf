package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadToleratesTruncatedLastLine(t *testing.T) {
	in := `{"t_s":1,"event":"request_sent","agent":1,"round":1}` + "\n" + `{"t_s":2,"event":"do`
	got, err := Read[Event](strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, got, 1)

	_, err = Read[Event](strings.NewReader("{bad}\n{}\n"))
	assert.ErrorContains(t, err, "line 1: ")
}

func TestReadFileNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile[Sample](filepath.Join(dir, "samples.jsonl"))
	assert.EqualError(t, err, "read "+filepath.Join(dir, "samples.jsonl")+": no such file or directory")
	path := filepath.Join(dir, "samples.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"t_s":1,"in_flight":2}`+"\n[]\n"), 0o644))
	_, err = ReadFile[Sample](path)
	assert.ErrorContains(t, err, path+" line 2: ")
	w, err := Create[Sample](path)
	require.NoError(t, err)
	w.Write(Sample{TS: 1, InFlight: 2, Agents: map[State]int{StateReading: 3}})
	require.NoError(t, w.Close())
	got, err := ReadFile[Sample](path)
	require.NoError(t, err)
	assert.Equal(t, []Sample{{TS: 1, InFlight: 2, Agents: map[State]int{StateReading: 3}}}, got)
}
