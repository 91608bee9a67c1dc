"""The names an option may choose from, kept here so the options stand below the code that runs them."""

CLIENTS = ("objperf", "s5cmd", "aws cli", "aws cli tuned", "boto3", "aws crt", "obstore", "s3torchconnector",
           "ruby sdk", "curl")

STUDY_NAMES = ("read-concurrency", "write-part-size", "key-fanout", "bucket-fanout", "ip-family", "mixed", "sustained",
               "ttfb-size", "hot-object", "ceiling-proof", "client-cpu", "wan",
               "rate-sweep", "request-rate", "checksums")
