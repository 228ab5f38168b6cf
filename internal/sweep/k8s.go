package sweep

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// JobFile is the Kubernetes manifest `agentsim sweep --emit k8s` writes beside the plan.
const JobFile = "job.yaml"

// JobOptions configure the Kubernetes Indexed Job that runs a sweep's runs as pods.
type JobOptions struct {
	// Name is the Job's name (a DNS label); Image the agentsim image every pod runs.
	Name  string
	Image string
	// Claim is the PersistentVolumeClaim holding the sweep directory (ReadWriteMany when
	// pods on several nodes write to it), mounted at MountPath; SubPath is the sweep
	// directory within the volume, "" for its root.
	Claim     string
	MountPath string
	SubPath   string
	// Parallelism is how many pods run at once.
	Parallelism int
	// APIKeySecret, when set, names a Secret whose key "api-key" every pod gets as
	// AGENTSIM_API_KEY.
	APIKeySecret string
}

// Job builds the Indexed Job that runs every run of p: one completion index per run, each
// pod running `agentsim sweep cell --plan MOUNT/sweep.json`, which reads its index from
// JOB_COMPLETION_INDEX and writes its run directory to the mounted volume. A pod exits 0
// whatever its run's verdict (a verdict is a result, not a failure), so a failed index is an
// infrastructure failure, retried once.
func Job(p *Plan, o JobOptions) *batchv1.Job {
	indexed := batchv1.IndexedCompletion
	n := int32(len(p.Runs))
	labels := map[string]string{"app.kubernetes.io/name": "agentsim", "app.kubernetes.io/component": "sweep",
		"agentsim.dev/sweep": o.Name}
	c := corev1.Container{
		Name:         "cell",
		Image:        o.Image,
		Command:      []string{"agentsim", "sweep", "cell", "--plan", path.Join(o.MountPath, PlanFile)},
		VolumeMounts: []corev1.VolumeMount{{Name: "sweep", MountPath: o.MountPath, SubPath: o.SubPath}},
		// One run per core: the harness's scheduling lag stays small (see Local.Auto).
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
	}
	if o.APIKeySecret != "" {
		c.Env = []corev1.EnvVar{{Name: "AGENTSIM_API_KEY", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: o.APIKeySecret}, Key: "api-key"}}}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &n,
			Parallelism:          ptr(int32(max(1, min(o.Parallelism, len(p.Runs))))),
			BackoffLimitPerIndex: ptr(int32(1)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{c},
					Volumes: []corev1.Volume{{Name: "sweep", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.Claim}}}},
				},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// JobYAML renders the Job as YAML, as kubectl apply -f reads it.
func JobYAML(j *batchv1.Job) ([]byte, error) {
	data, err := yaml.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode Kubernetes Job: %w", err)
	}
	return data, nil
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// JobName derives a Job name from the sweep directory's name: "agentsim-" and the name in
// lower case, other characters as "-", at most 63 characters (a DNS label, which leaves the
// pods' names room for their index suffix as Kubernetes trims them).
func JobName(dir string) string {
	base := notDNS.ReplaceAllString(strings.ToLower(path.Base(strings.ReplaceAll(dir, `\`, "/"))), "-")
	name := strings.Trim("agentsim-"+strings.Trim(base, "-"), "-")
	if len(name) > 52 {
		name = strings.TrimRight(name[:52], "-")
	}
	return name
}
