package sweep

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// decodeJob decodes a manifest strictly, as a batch/v1 Job: an unknown or duplicated field is
// an error, and so is any other kind.
func decodeJob(t *testing.T, data []byte) (*batchv1.Job, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, batchv1.AddToScheme(scheme))
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	obj, gvk, err := s.Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	if gvk.Group != "batch" || gvk.Version != "v1" || gvk.Kind != "Job" {
		t.Fatalf("decoded %v, want batch/v1 Job", gvk)
	}
	return obj.(*batchv1.Job), nil
}

// TestJobDecodesStrictly checks that the manifest decodes strictly back into a batch/v1
// Indexed Job with one completion index per run, each pod running the per-index command
// on the mounted sweep directory.
func TestJobDecodesStrictly(t *testing.T) {
	p := NewPlan("agentsim sweep", Base{Workload: "smoke", Name: "smoke", SimProfile: "dsv4-pd", Speedup: 50},
		[]Dimension{{Key: "pacer.kind", Values: []string{"slots", "aimd", "gradient"}}}, []string{"none", "long-context-wedge"}, []int64{1, 2, 3})
	data, err := JobYAML(Job(p, JobOptions{Name: JobName("sweeps/20261130T2000Z-ocbrowse"), Image: "agentsim:v1",
		Claim: "sweeps", MountPath: "/sweep", SubPath: "s1", Parallelism: 4, APIKeySecret: "agentsim"}))
	require.NoError(t, err)
	job, err := decodeJob(t, data)
	require.NoError(t, err, "manifest:\n%s", data)

	assert.Equal(t, "agentsim-20261130t2000z-ocbrowse", job.Name)
	require.NotNil(t, job.Spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
	assert.Equal(t, int32(18), *job.Spec.Completions, "3 kinds × 2 faults × 3 seeds")
	assert.Equal(t, int32(4), *job.Spec.Parallelism)
	pod := job.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, []string{"agentsim", "sweep", "cell", "--plan", "/sweep/sweep.json"}, c.Command)
	assert.Equal(t, "agentsim:v1", c.Image)
	require.Len(t, c.VolumeMounts, 1)
	assert.Equal(t, "/sweep", c.VolumeMounts[0].MountPath)
	assert.Equal(t, "s1", c.VolumeMounts[0].SubPath)
	assert.Equal(t, "sweeps", pod.Volumes[0].PersistentVolumeClaim.ClaimName)
	assert.Equal(t, "AGENTSIM_API_KEY", c.Env[0].Name)

	// The strictness is real: a misspelt field is refused.
	bad := strings.Replace(string(data), "completionMode:", "completionMod:", 1)
	_, err = decodeJob(t, []byte(bad))
	assert.ErrorContains(t, err, "completionMod")
}

// TestJobName checks that Job names are DNS labels.
func TestJobName(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"sweeps/20261130T200000Z-ocbrowse", "agentsim-20261130t200000z-ocbrowse"},
		{"/tmp/My_Sweep.2/", "agentsim-my-sweep-2"},
		{strings.Repeat("x", 80), "agentsim-" + strings.Repeat("x", 43)},
	} {
		assert.Equal(t, tc.want, JobName(tc.dir), "JobName(%q)", tc.dir)
	}
}
