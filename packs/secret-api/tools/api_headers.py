# api-headers — a Python tool (kind "python") of the secret-api pack: the extra request headers call-api sends.
# Output: { "x-api-key": "{{secret:API_TOKEN}}" } — reach.secret() gives the placeholder, never the value; the host
# puts the value in only when call-api sends the header to one of the secret's hosts.
def main(input, reach):
    return {"x-api-key": reach.secret("API_TOKEN")}
