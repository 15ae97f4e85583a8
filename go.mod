module github.com/sharq-dev/sharq

go 1.26
