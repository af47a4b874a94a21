"""dynamo_plugin package."""
