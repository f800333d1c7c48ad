module hearth.example/host

go 1.19
