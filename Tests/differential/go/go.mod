module bearerproxy/differential

go 1.19
