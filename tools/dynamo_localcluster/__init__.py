"""dynamo_localcluster package."""
