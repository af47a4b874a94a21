"""dynamo_hooks package."""
