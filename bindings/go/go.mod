module github.com/tdbfilter/tdbfilter/bindings/go

go 1.24
