module proofline.example/prove

go 1.19
