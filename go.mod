module github.com/axle-ml/axle

go 1.26.0

require (
	golang.org/x/image v0.30.0
	golang.org/x/sys v0.49.0
	gonum.org/v1/gonum v0.16.0
	google.golang.org/protobuf v1.36.12
)
