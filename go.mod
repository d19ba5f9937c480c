module github.com/axle-ml/axle

go 1.26
