module local/dynamo-platform/pause

go 1.26.0
