"""Counts each stream record it is handed, per item id, with what Lambda's event said about it.
An item with `fail_times: N` is reported failed the first N times; processing stops there, as
Lambda advises for streams (the rest of the batch comes again)."""

import os

import boto3


def handler(event, context):
    table = boto3.resource("dynamodb").Table(os.environ["SEEN_TABLE"])
    for record in event["Records"]:
        change = record["dynamodb"]
        image = change["NewImage"]
        handled = table.update_item(
            Key={"id": image["id"]["S"]},
            UpdateExpression="ADD handled :one SET event_name = :name, source_arn = :source, "
            "aws_region = :region, created_type = :created, seq = :seq",
            ExpressionAttributeValues={
                ":one": 1,
                ":name": record["eventName"],
                ":source": record["eventSourceARN"],
                ":region": record["awsRegion"],
                ":created": type(change["ApproximateCreationDateTime"]).__name__,
                ":seq": change["SequenceNumber"],
            },
            ReturnValues="UPDATED_NEW",
        )["Attributes"]["handled"]
        if handled <= int(image.get("fail_times", {}).get("N", "0")):
            return {"batchItemFailures": [{"itemIdentifier": change["SequenceNumber"]}]}
    return {"batchItemFailures": []}
