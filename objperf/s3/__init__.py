"""The S3 control plane: settings and trust, SigV4 presigning, the light (libcurl) and botocore
planes behind one client, and the target a run reads."""
