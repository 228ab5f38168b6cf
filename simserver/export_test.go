package simserver

// Unexported values the black-box tests (package simserver_test) assert on.
const (
	AccessLogTimeLayout = accessLogTimeLayout
	StatusClientClosed  = statusClientClosed
	StreamErrorMessage  = streamErrorMessage
)

// SGLangTTFTBuckets are the bounds of sglang:time_to_first_token_seconds, in seconds.
var SGLangTTFTBuckets = sglangTTFTBuckets
